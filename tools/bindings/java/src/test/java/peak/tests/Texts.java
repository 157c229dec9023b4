package peak.tests;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import peak.Context;
import peak.Model;

/** Helpers the test classes share. */
final class Texts {
  private Texts() {}

  /** About 400 tokens of stories260K's vocabulary: a prompt whose evaluation takes a while. */
  static String longPrompt() {
    StringBuilder sb = new StringBuilder();
    while (sb.length() < 1000) sb.append(" Lily saw a big red ball in the park and ran to get it.");
    return sb.toString();
  }

  /** The index of the largest value (the first of equal ones). */
  static int argmax(float[] values) {
    int best = 0;
    for (int i = 1; i < values.length; ++i) {
      if (values[i] > values[best]) best = i;
    }
    return best;
  }

  /**
   * Greedy decoding done here rather than by peak's sampler: the prompt evaluated, then the largest
   * logit taken and evaluated until an end-of-generation token or {@code maxTokens}; the text is
   * the tokens' bytes (token_to_piece) decoded once at the end.
   */
  static String greedyByArgmax(Model model, Context context, String prompt, int maxTokens) {
    context.eval(model.tokenize(prompt, true, false));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int i = 0; i < maxTokens; ++i) {
      int token = argmax(context.logits());
      if (model.isEndOfGeneration(token)) break;
      byte[] piece = model.tokenPiece(token, false);
      bytes.write(piece, 0, piece.length);
      context.eval(new int[] {token});
    }
    return new String(bytes.toByteArray(), StandardCharsets.UTF_8);
  }

  static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    for (int n; (n = in.read(buf)) > 0; ) out.write(buf, 0, n);
    return out.toByteArray();
  }

  /**
   * Runs the built peak tool with {@code args} (its standard input closed, its standard error kept
   * in {@code dir}) and returns what it printed, after checking it exited with 0.
   */
  static String peakOutput(File dir, String... args) throws Exception {
    String cli = Fixtures.cli();
    Check.isTrue(cli != null, "the build has the peak tool (-Dpeak.cli)");
    List<String> command = new ArrayList<>();
    command.add(cli);
    command.addAll(Arrays.asList(args));
    Process p = new ProcessBuilder(command).redirectError(new File(dir, "peak-" + args[0] + ".stderr")).start();
    p.getOutputStream().close();
    String output = new String(readAll(p.getInputStream()), StandardCharsets.UTF_8);
    Check.equal(0, p.waitFor(), "the exit status of peak " + String.join(" ", args));
    return output;
  }

  /**
   * {@code lines} written one a line to {@code dir/name}, as UTF-8: texts for the peak tool's -f,
   * whose command line's encoding would depend on the locale.
   */
  static File linesFile(File dir, String name, String... lines) throws IOException {
    File file = new File(dir, name);
    Files.write(file.toPath(), (String.join("\n", lines) + "\n").getBytes(StandardCharsets.UTF_8));
    return file;
  }

  /**
   * JSON text without the whitespace between its tokens (what is inside strings kept): two texts of
   * one value with members in the same order compare equal.
   */
  static String compactJson(String json) {
    StringBuilder out = new StringBuilder();
    boolean inString = false;
    for (int i = 0; i < json.length(); ++i) {
      char c = json.charAt(i);
      if (inString) {
        out.append(c);
        if (c == '\\') {
          out.append(json.charAt(++i));
        } else if (c == '"') {
          inString = false;
        }
      } else if (c == '"') {
        inString = true;
        out.append(c);
      } else if (" \t\n\r".indexOf(c) < 0) {
        out.append(c);
      }
    }
    return out.toString();
  }
}
