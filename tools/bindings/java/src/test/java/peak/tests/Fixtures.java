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
