package peak;

/**
 * What a projector is (peak_projector_info), and how its language model takes a picture of one
 * frame: the text {@link #imagePrefix()}, the {@link #nImageTokens()} embeddings {@link
 * ImageEncoder#encode} gives (evaluated with {@link Context#evalEmbeddings(float[], boolean)},
 * attending both ways when {@link #bidirectional()}), then the text {@link #imageSuffix()}. A
 * projector that cuts pictures into tiles (SmolVLM) frames each: {@link Projector#pictureLayout}.
 * The texts hold control tokens: tokenize them with parseSpecial ({@link Model#tokenize}, {@link
 * GenerateOptions#parseSpecial}).
 */
public final class ProjectorInfo {
  String projectorType;
  long imageSize;
  long patchSize;
  long nImageTokens;
  long nEmbd;
  long nParams;
  long sizeBytes;
  String imagePrefix;
  String imageSuffix;
  boolean bidirectional;

  ProjectorInfo() {}

  /** "gemma3" (clip.projector_type). */
  public String projectorType() {
    return projectorType;
  }

  /** Pictures are resized to imageSize x imageSize pixels. */
  public long imageSize() {
    return imageSize;
  }

  /** ... and cut into patches of patchSize a side. */
  public long patchSize() {
    return patchSize;
  }

  /** Embeddings per frame (a picture is one frame or several: {@link Projector#pictureLayout}). */
  public long nImageTokens() {
    return nImageTokens;
  }

  /** Floats per embedding: the language model's width ({@link ModelInfo#nEmbd()}). */
  public long nEmbd() {
    return nEmbd;
  }

  public long nParams() {
    return nParams;
  }

  /** Bytes of the file's tensor data. */
  public long sizeBytes() {
    return sizeBytes;
  }

  /** The text before a picture's embeddings (Gemma 3: {@code "\n\n<start_of_image>"}). */
  public String imagePrefix() {
    return imagePrefix;
  }

  /** The text after them (Gemma 3: {@code "<end_of_image>\n\n"}). */
  public String imageSuffix() {
    return imageSuffix;
  }

  /** true: a picture's embeddings attend to each other both ways (Gemma 3), not only to those before. */
  public boolean bidirectional() {
    return bidirectional;
  }
}
