package peak;

/** What a model is (peak_model_info). */
public final class ModelInfo {
  String architecture;
  String name;
  String chatTemplate;
  String chatTemplateSource;
  String chatTemplateWarning;
  long nParams;
  long weightBytes;
  long nVocab;
  long nCtxTrain;
  long nEmbd;
  long nLayer;
  long nHead;
  long nHeadKv;
  long headDim;
  long nFf;
  int bosToken;
  int eosToken;
  long decodeBytesPerToken;
  boolean isEncoder;
  int pooling;

  ModelInfo() {}

  /** "llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "smollm3" or "bert" (an embedding model). */
  public String architecture() {
    return architecture;
  }

  /** general.name, "" if absent. */
  public String name() {
    return name;
  }

  /** "jinja" (the model's own template) or a built-in family, e.g. "chatml". */
  public String chatTemplate() {
    return chatTemplate;
  }

  /** "embedded", "built-in" or "fallback" (see peak.h). */
  public String chatTemplateSource() {
    return chatTemplateSource;
  }

  public String chatTemplateWarning() {
    return chatTemplateWarning;
  }

  public long nParams() {
    return nParams;
  }

  /** Bytes of the file's tensor data. */
  public long weightBytes() {
    return weightBytes;
  }

  public long nVocab() {
    return nVocab;
  }

  public long nCtxTrain() {
    return nCtxTrain;
  }

  public long nEmbd() {
    return nEmbd;
  }

  public long nLayer() {
    return nLayer;
  }

  public long nHead() {
    return nHead;
  }

  public long nHeadKv() {
    return nHeadKv;
  }

  public long headDim() {
    return headDim;
  }

  public long nFf() {
    return nFf;
  }

  /** -1 when the model has none. */
  public int bosToken() {
    return bosToken;
  }

  public int eosToken() {
    return eosToken;
  }

  /** Weight bytes one decoded token reads. */
  public long decodeBytesPerToken() {
    return decodeBytesPerToken;
  }

  /** true: an embedding model (bert), for an {@link Embedder}; false: a decoder, for contexts and sessions. */
  public boolean isEncoder() {
    return isEncoder;
  }

  /** An embedding model's own pooling (never {@link Pooling#MODEL}); {@link Pooling#NONE} for a decoder. */
  public Pooling pooling() {
    return Pooling.of(pooling);
  }
}
