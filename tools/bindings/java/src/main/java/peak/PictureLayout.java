package peak;

import java.util.Collections;
import java.util.List;

/**
 * How a picture of a given size enters the language model (peak_projector_picture_layout), as the
 * model's processor frames it: {@link #nFrames()} runs of {@link #tokensPerFrame()} image tokens
 * ({@link ImageEncoder#encode} gives them all, frame after frame), text {@link #texts()}{@code
 * .get(i)} before frame i and the last text after the last frame. Gemma 3: one frame. SmolVLM: the
 * tiles ({@link #gridRows()} x {@link #gridCols()}, row by row), then an overview of the whole
 * picture; a picture that makes one tile is not cut (a grid of 0 x 0). The texts hold control
 * tokens: tokenize them with parseSpecial.
 */
public final class PictureLayout {
  private final int tokensPerFrame;
  private final int gridRows;
  private final int gridCols;
  private final List<String> texts;

  PictureLayout(int tokensPerFrame, int gridRows, int gridCols, List<String> texts) {
    this.tokensPerFrame = tokensPerFrame;
    this.gridRows = gridRows;
    this.gridCols = gridCols;
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

  /** {@link #nFrames()} + 1 texts: the one before each frame, then the one after the last. */
  public List<String> texts() {
    return texts;
  }
}
