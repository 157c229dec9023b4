package peak;

/**
 * The sampler chain (peak_sampler_params): optionally a grammar or JSON Schema the text must
 * follow, repetition penalties, top-k, top-p, min-p, temperature, then a seeded draw. Starts from
 * peak's defaults; the same seed and inputs give the same tokens on every platform.
 */
public final class SamplerParams {
  float temperature;
  long topK;
  float topP;
  float minP;
  long penaltyLastN;
  float repeatPenalty;
  float frequencyPenalty;
  float presencePenalty;
  long seed;
  String grammar;
  String grammarRoot;
  String jsonSchema;

  public SamplerParams() {
    Native.fillDefaults(this);
  }

  /** Always the most likely token (temperature 0). */
  public static SamplerParams greedy() {
    return new SamplerParams().temperature(0);
  }

  /** &gt;= 0; 0 is greedy (default 0.8). */
  public SamplerParams temperature(float value) {
    temperature = value;
    return this;
  }

  public float temperature() {
    return temperature;
  }

  /** 0 is off (default 40). */
  public SamplerParams topK(long value) {
    topK = value;
    return this;
  }

  public long topK() {
    return topK;
  }

  /** (0, 1]; 1 is off (default 0.95). */
  public SamplerParams topP(float value) {
    topP = value;
    return this;
  }

  public float topP() {
    return topP;
  }

  /** [0, 1]; 0 is off (default 0.05). */
  public SamplerParams minP(float value) {
    minP = value;
    return this;
  }

  public float minP() {
    return minP;
  }

  /** Tokens the penalties look back over (default 64). */
  public SamplerParams penaltyLastN(long value) {
    penaltyLastN = value;
    return this;
  }

  public long penaltyLastN() {
    return penaltyLastN;
  }

  /** 1 is off (default). */
  public SamplerParams repeatPenalty(float value) {
    repeatPenalty = value;
    return this;
  }

  public float repeatPenalty() {
    return repeatPenalty;
  }

  /** 0 is off (default). */
  public SamplerParams frequencyPenalty(float value) {
    frequencyPenalty = value;
    return this;
  }

  public float frequencyPenalty() {
    return frequencyPenalty;
  }

  /** 0 is off (default). */
  public SamplerParams presencePenalty(float value) {
    presencePenalty = value;
    return this;
  }

  public float presencePenalty() {
    return presencePenalty;
  }

  /** The random sequence's seed, an unsigned 64-bit value. */
  public SamplerParams seed(long value) {
    seed = value;
    return this;
  }

  public long seed() {
    return seed;
  }

  /**
   * GBNF text (llama.cpp's GBNF Guide) every generated text must be a string of; null (default): no
   * grammar. Generation stops at the grammar's end once nothing can follow. A grammar that does not
   * compile makes the Sampler or Session refuse it (PeakException, INVALID_ARGUMENT, naming the line
   * and column). In a session it holds each answer; a thinking model's reasoning stays free.
   */
  public SamplerParams grammar(String gbnf) {
    grammar = gbnf;
    return this;
  }

  public String grammar() {
    return grammar;
  }

  /** The start rule of {@link #grammar(String)}; null (default): "root". */
  public SamplerParams grammarRoot(String rule) {
    grammarRoot = rule;
    return this;
  }

  public String grammarRoot() {
    return grammarRoot;
  }

  /**
   * A JSON Schema instead of a grammar: the text must be JSON that satisfies it (the grammar is
   * {@link Grammar#fromJsonSchema}'s). "{}" allows any JSON value, {"type": "object"} any object;
   * null (default): none. Set with a grammar or grammar root, or not convertible, it is refused
   * (PeakException, INVALID_ARGUMENT; a schema's message names the subschema, "at POINTER: ...").
   */
  public SamplerParams jsonSchema(String schema) {
    jsonSchema = schema;
    return this;
  }

  public String jsonSchema() {
    return jsonSchema;
  }
}
