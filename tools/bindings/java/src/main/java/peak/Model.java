package peak;

import java.io.FileDescriptor;

/**
 * A loaded GGUF model (or only its tokenizer, {@link #loadVocab}). Immutable: any number of threads
 * may use it at once, and any number of contexts, samplers, sessions, adapters and embedders may
 * share it. Close it after them: {@link #close()} refuses while one of them is open.
 */
public final class Model extends NativeHandle {

  private Model(long handle) {
    super("Model", null, handle);
  }

  /** Loads the model at {@code path} with the default parameters. */
  public static Model load(String path) {
    return load(path, new ModelParams());
  }

  public static Model load(String path, ModelParams params) {
    return new Model(Native.modelLoad(path, params));
  }

  /**
   * Loads the GGUF held in bytes [offset, offset + length) of an open file, such as an uncompressed
   * asset of an APK: {@code AssetFileDescriptor}'s {@code getParcelFileDescriptor().getFd()}, {@code
   * getStartOffset()} and {@code getLength()}. Every size in the file is checked against {@code
   * length}. Mapped (the default), {@code offset} must be a multiple of 4, as zipalign aligns
   * uncompressed entries. peak keeps no reference to the descriptor: close it when this returns.
   */
  public static Model load(int fd, long offset, long length, ModelParams params) {
    return new Model(Native.modelLoadFd(fd, offset, length, params));
  }

  /**
   * As {@link #load(int, long, long, ModelParams)}, with a FileDescriptor (a RandomAccessFile's
   * getFD()). Its number is a private field of FileDescriptor: on Android, prefer the int form.
   */
  public static Model load(FileDescriptor fd, long offset, long length, ModelParams params) {
    return load(Native.fdOf(fd), offset, length, params);
  }

  /**
   * Opens only the tokenizer of a GGUF file (a vocabulary-only file, or a model whose tensors are
   * then never read): for the token functions and {@link #info()}. Contexts, samplers and sessions
   * refuse it.
   */
  public static Model loadVocab(String path) {
    return new Model(Native.modelLoadVocab(path));
  }

  public static Model loadVocab(FileDescriptor fd, long offset, long length) {
    return new Model(Native.modelLoadVocabFd(Native.fdOf(fd), offset, length));
  }

  /**
   * What loading the model at {@code path} and creating a context on it would take, from the file's
   * metadata alone: refuse a model too large for the device before loading it. Either params may be
   * null for the defaults.
   */
  public static MemoryEstimate estimateMemory(String path, ModelParams model, ContextParams context) {
    return Native.estimateMemory(path, orDefault(model), orDefault(context));
  }

  public static MemoryEstimate estimateMemory(FileDescriptor fd, long offset, long length, ModelParams model,
                                              ContextParams context) {
    return Native.estimateMemoryFd(Native.fdOf(fd), offset, length, orDefault(model), orDefault(context));
  }

  public ModelInfo info() {
    return Native.modelInfo(handle());
  }

  /**
   * Text to token ids. {@code addSpecial}: add BOS/EOS as the model asks; {@code parseSpecial}:
   * recognise control tokens written in the text (only for text you trust).
   */
  public int[] tokenize(String text, boolean addSpecial, boolean parseSpecial) {
    return Native.tokenize(handle(), text, addSpecial, parseSpecial);
  }

  /** The bytes of one token: possibly part of a UTF-8 character, so not a String. */
  public byte[] tokenPiece(int token, boolean renderSpecial) {
    return Native.tokenPiece(handle(), token, renderSpecial);
  }

  /** The text of a token sequence; {@code removeSpecial} drops the BOS/EOS tokenize added. */
  public String detokenize(int[] tokens, boolean removeSpecial, boolean renderSpecial) {
    return Native.detokenize(handle(), tokens, removeSpecial, renderSpecial);
  }

  /** Whether the token ends a generation (EOS, end of turn ...). */
  public boolean isEndOfGeneration(int token) {
    return Native.tokenIsEog(handle(), token);
  }

  @Override
  String dependentsName() {
    return "contexts, samplers, sessions, adapters, embedders or pass groups";
  }

  @Override
  void free(long handle) {
    Native.modelFree(handle);
  }

  private static ModelParams orDefault(ModelParams p) {
    return p != null ? p : new ModelParams();
  }

  private static ContextParams orDefault(ContextParams p) {
    return p != null ? p : new ContextParams();
  }
}
