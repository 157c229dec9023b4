package peak;

import java.util.Collections;
import java.util.List;

/**
 * How a picture of a given size enters the language model (peak_projector_picture_layout), as the
 * model's processor frames it: {@link #nFrames()} runs of {@link #tokensPerFrame()} image tokens
 * ({@link ImageEncoder#encode} gives them all, frame after frame), text {@link #texts()}{@code
 * .get(i)} before frame i and the last text after the last frame. Gemma 3: one frame. SmolVLM: the
 * tiles ({@link #gridRows()} x {@link #gridCols()}, row by row), then an overview of the whole
 * picture; a picture that makes one tile is not cut (a grid of 0 x 0). Qwen2.5-VL: one frame of
 * the picture's own size, {@link #tokenCols()} tokens across, which its language model places by
 * row and column ({@link Context#evalPicture}). The texts hold control tokens: tokenize them with
 * parseSpecial.
 */
public final class PictureLayout {
  private final int tokensPerFrame;
  private final int gridRows;
  private final int gridCols;
  private final int tokenCols;
  private final List<String> texts;

  PictureLayout(int tokensPerFrame, int gridRows, int gridCols, int tokenCols, List<String> texts) {
    this.tokensPerFrame = tokensPerFrame;
    this.gridRows = gridRows;
    this.gridCols = gridCols;
    this.tokenCols = tokenCols;
    this.texts = Collections.unmodifiableList(texts);
  }

  public int nFrames() {
    return texts.size() - 1;
  }

  public int tokensPerFrame() {
    return tokensPerFrame;
  }

  /** Tiles down; 0: the picture is not cut. */
  public int gridRows() {
    return gridRows;
  }

  /** Tiles across; 0: the picture is not cut. */
  public int gridCols() {
    return gridCols;
  }

  /**
   * A frame's tokens across for a projector that sizes each picture (Qwen2.5-VL's), whose
   * language model places them by row and column ({@link Context#evalPicture}); 0 for the others,
   * whose tokens follow one another.
   */
  public int tokenCols() {
    return tokenCols;
  }

  /** {@link #nFrames()} + 1 texts: the one before each frame, then the one after the last. */
  public List<String> texts() {
    return texts;
  }
}
