package peak;

/**
 * A compiled grammar (peak_grammar) an app uses on its own: to tell whether a text (a model's
 * output, a form field) is a whole string of it, the start of one, or neither. The same grammars
 * and verdicts as sampling with {@link SamplerParams#grammar(String)} or {@link
 * SamplerParams#jsonSchema(String)}. Immutable: any number of threads may check texts at once; close
 * it after them.
 */
public final class Grammar extends NativeHandle {
  /** peak_grammar_verdict, in its order. */
  public enum Verdict {
    /** The text is a whole string of the grammar. */
    COMPLETE,
    /** It is not, but some continuation makes it one. */
    PREFIX,
    /** No continuation makes it one. */
    REJECTED
  }

  private Grammar(long handle) {
    super("Grammar", null, handle);
  }

  /**
   * Compiles GBNF text (llama.cpp's GBNF Guide) from the rule {@code root} (null: "root"). One that
   * does not compile throws PeakException (INVALID_ARGUMENT) naming the line and column.
   */
  public static Grammar fromGbnf(String gbnf, String root) {
    return new Grammar(Native.grammarCreate(gbnf, root));
  }

  /**
   * The grammar of a JSON Schema, as {@link SamplerParams#jsonSchema(String)} converts it. A schema
   * that cannot be converted throws PeakException (INVALID_ARGUMENT) naming the subschema, "at
   * POINTER: ...".
   */
  public static Grammar fromJsonSchema(String schema) {
    return new Grammar(Native.grammarFromJsonSchema(schema));
  }

  /**
   * The verdict on {@code text} (as UTF-8; an unpaired surrogate is U+FFFD), read from the grammar's
   * start. A grammar so ambiguous that the matcher's bounds are reached throws PeakException
   * (UNSUPPORTED).
   */
  public Verdict check(String text) {
    return Verdict.values()[Native.grammarCheck(handle(), text)];
  }

  @Override
  void free(long handle) {
    Native.grammarFree(handle);
  }
}
