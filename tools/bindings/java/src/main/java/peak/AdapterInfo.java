package peak;

/** What an adapter adapts (peak_adapter_info). */
public final class AdapterInfo {
  int kind;
  long nTargets;
  long minRank;
  long maxRank;
  float alpha;
  long firstLayer;
  long lastLayer;
  long tensorBytes;

  AdapterInfo() {}

  public AdapterKind kind() {
    return AdapterKind.values()[kind];
  }

  /** LoRA: matrices adapted; control vector: layers with a direction. */
  public long nTargets() {
    return nTargets;
  }

  /** LoRA only. */
  public long minRank() {
    return minRank;
  }

  /** LoRA only. */
  public long maxRank() {
    return maxRank;
  }

  /** LoRA: adapter.lora.alpha (0: scales apply as given). */
  public float alpha() {
    return alpha;
  }

  /** Control vector: its first layer with a direction. */
  public long firstLayer() {
    return firstLayer;
  }

  /** Control vector: its last layer with a direction. */
  public long lastLayer() {
    return lastLayer;
  }

  /** LoRA: bytes of its matrices, read once per token besides the model's. */
  public long tensorBytes() {
    return tensorBytes;
  }
}
