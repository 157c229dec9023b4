package peak.tests;

import java.io.File;

/** Where the tests find their files (system properties the CMake test command sets). */
final class Fixtures {
  private Fixtures() {}

  /** ../shared/models/stories260K.gguf: a real tiny Llama (F32, 512-token SentencePiece vocabulary). */
  static String stories() {
    return new File(property("peak.shared"), "models/stories260K.gguf").getPath();
  }

  /**
   * tests/chat's scripted Qwen3 model: Qwen3's tokenizer and chat template, and weights that answer
   * "Blue." to any question (after the empty reasoning block its template opens).
   */
  static String scriptedQwen3() {
    return property("peak.scriptedQwen3");
  }

  /** The scripted Qwen3 model whose script opens a Hermes tool call where the other answers. */
  static String scriptedQwen3Call() {
    return property("peak.scriptedQwen3Call");
  }

  /**
   * stories260K whose general.name is "Stories\0\u001b[2J260K" (tests/tools'
   * write_edited_stories), or null when the build has none.
   */
  static String oddNameModel() {
    return System.getProperty("peak.oddNameModel");
  }

  /**
   * A random bge-small-en-v1.5 (bert, F32) with BGE's WordPiece vocabulary, which `peak synth`
   * writes before the embedding tests.
   */
  static String bge() {
    return property("peak.bgeModel");
  }

  /**
   * A random ms-marco-MiniLM-L6-v2 (a bert cross-encoder with its classification head, F32) with
   * BGE's WordPiece vocabulary, which `peak synth` writes before the reranking tests.
   */
  static String msmarco() {
    return property("peak.msmarcoModel");
  }

  /**
   * tests/runtime's tiny Gemma 3 image encoder (random F32 weights: 32 x 32 pixels in patches of 4,
   * 4 image tokens of 48 floats).
   */
  static String imageProjector() {
    return property("peak.imageProjector");
  }

  /** The same encoder 64 wide at its output: stories260K's width. */
  static String imageProjector64() {
    return property("peak.imageProjector64");
  }

  /** A tiny SmolVLM (idefics3) encoder 64 wide that cuts pictures into tiles of 32, the longest edge 96. */
  static String imageTiledProjector64() {
    return property("peak.imageTiledProjector64");
  }

  /** A tiny qwen2vl language model (multimodal rotary positions), 64 wide. */
  static String qwen2vlModel() {
    return property("peak.qwen2vlModel");
  }

  /** A tiny Qwen2.5-VL encoder 64 wide: pictures of their own size, at most 64 tokens. */
  static String qwen2vlProjector() {
    return property("peak.qwen2vlProjector");
  }

  /**
   * The naive double-precision reference's embeddings of the test photo resized to 32 x 32 (as PIL
   * resizes it) on {@link #imageProjector()}: the float count, then the floats, token by token.
   */
  static String imageReference() {
    return property("peak.imageReference");
  }

  /** A file of tests/data (images/png/photo_256x192.png ...). */
  static File testData(String path) {
    return new File(property("peak.testData"), path);
  }

  /** A fresh directory for one test class's files, in the build tree. */
  static File scratch(String name) {
    File dir = new File(property("peak.tmp"), "java-" + name);
    if (!dir.isDirectory() && !dir.mkdirs()) throw new IllegalStateException("cannot create " + dir);
    return dir;
  }

  /** The built `peak` tool, or null when the build has none. */
  static String cli() {
    return System.getProperty("peak.cli");
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    if (value == null) throw new IllegalStateException("-D" + name + " is not set");
    return value;
  }
}
