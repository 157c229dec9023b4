package peak.tests;

import java.io.IOException;
import java.nio.file.Files;
import java.util.List;
import peak.Context;
import peak.ContextParams;
import peak.GenerateOptions;
import peak.GenerateResult;
import peak.Image;
import peak.ImageEncoder;
import peak.Message;
import peak.Model;
import peak.PictureLayout;
import peak.Projector;
import peak.Role;
import peak.SamplerParams;
import peak.Session;
import peak.SessionParams;
import peak.Status;

/**
 * Pictures in a session on stories260K, with tests/runtime's tiny Gemma 3 encoder at its width (64):
 * the test photo encoded and attached, a greedy turn that answers the same in two sessions (and
 * otherwise than without the picture), the message keeping its marker and its picture; refusals (no projector, rows of a wrong length, a
 * marker count that does not match, another model's projector) and the projector's lifetime; a
 * tiny SmolVLM encoder's tiles framed by the picture's size.
 */
public final class SessionImageTests {
  private static byte[] photo() throws IOException {
    return Files.readAllBytes(Fixtures.testData("images/png/photo_256x192.png").toPath());
  }

  private static SessionParams params(Projector projector) {
    return new SessionParams().chatTemplate("raw").nThreads(1).sampler(SamplerParams.greedy()).projector(projector);
  }

  private static String chat(Session session, String text) {
    StringBuilder answer = new StringBuilder();
    GenerateResult r = session.chat(text, new GenerateOptions().maxTokens(16), answer::append);
    Check.isTrue(r.nGeneratedTokens() > 0, "the answer's tokens");
    return answer.toString();
  }

  /** The photo's embeddings, attached to a new session on the projector, and the turn's answer. */
  private static String answerWithThePhoto(Model model, Projector projector, float[] embeddings) {
    try (Session session = new Session(model, params(projector))) {
      session.attachImage(embeddings);
      Check.equal(1, session.attachedImages(), "attached before the turn");
      String answer = chat(session, "What is in the picture?");
      Check.equal(0, session.attachedImages(), "attached after the turn: the message took it");
      return answer;
    }
  }

  @Test
  public void theMarker() {
    Check.equal("<__media__>", Session.IMAGE_MARKER, "Session.IMAGE_MARKER: PEAK_IMAGE_MARKER");
    Check.isTrue(new SessionParams().projector() == null, "no projector by default");
  }

  @Test
  public void aTurnWithThePhotoAnswersTheSameInTwoSessions() throws Exception {
    try (Model model = Model.load(Fixtures.stories());
         Projector projector = Projector.load(Fixtures.imageProjector64());
         ImageEncoder encoder = new ImageEncoder(projector);
         Image photo = Image.decode(photo())) {
      float[] embeddings = encoder.encode(photo);
      String first = answerWithThePhoto(model, projector, embeddings);
      Check.isTrue(!first.isEmpty(), "an answer");
      Check.equal(first, answerWithThePhoto(model, projector, embeddings), "the second session's answer");
      try (Session textOnly = new Session(model, params(null))) {
        Check.isTrue(!first.equals(chat(textOnly, "What is in the picture?")), "the picture changes the answer");
      }

      // Encoded and attached in one call; the user message keeps the marker (the picture first,
      // the text unmarked) and the picture beside it.
      try (Session session = new Session(model, params(projector))) {
        session.attachImage(encoder, photo);
        Check.equal(first, chat(session, "What is in the picture?"), "attachImage(encoder, image)'s answer");
        List<Message> messages = session.messages();
        Check.equal(2, messages.size(), "messages: the user's and the answer");
        Message user = messages.get(0);
        Check.equal(Role.USER, user.role(), "the first message's role");
        Check.equal(1, user.imageCount(), "the user message's pictures");
        Check.isTrue(user.text().startsWith(Session.IMAGE_MARKER), "the marker first: " + user.text());
        Check.equal(Session.IMAGE_MARKER + "What is in the picture?", user.text(), "the user message's text");
        Check.equal(0, messages.get(1).imageCount(), "the answer's pictures");
        Check.equal(user.imageCount(), session.message(0).imageCount(), "message(0)'s pictures");

        // Marked where it goes, in an appended message.
        session.attachImage(embeddings);
        String text = "And here: " + Session.IMAGE_MARKER + " what now?";
        session.append(Role.USER, text);
        Message appended = session.message(2);
        Check.equal(text, appended.text(), "the appended message's text, marker kept");
        Check.equal(1, appended.imageCount(), "the appended message's pictures");
        Check.equal(0, session.attachedImages(), "attached after the append");
      }
    }
  }

  @Test
  public void refusals() throws Exception {
    try (Model model = Model.load(Fixtures.stories());
         Projector projector = Projector.load(Fixtures.imageProjector64());
         ImageEncoder encoder = new ImageEncoder(projector);
         Image photo = Image.decode(photo())) {
      float[] embeddings = encoder.encode(photo);
      try (Session textOnly = new Session(model, params(null))) {
        Check.throwsPeak(Status.INVALID_ARGUMENT, "takes no images", () -> textOnly.attachImage(embeddings));
        Check.equal(0, textOnly.attachedImages(), "a text-only session's pictures");
      }
      try (Session session = new Session(model, params(projector))) {
        Check.throwsPeak(Status.INVALID_ARGUMENT, "n_floats is 63, not a whole number of rows of the model's width 64",
            () -> session.attachImage(new float[63]));
        Check.throwsPeak(Status.INVALID_ARGUMENT, "n_floats is 0", () -> session.attachImage(new float[0]));
        float[] withNan = embeddings.clone();
        withNan[5] = Float.NaN;
        Check.throwsPeak(Status.INVALID_ARGUMENT, "row 0 holds a value that is not finite",
            () -> session.attachImage(withNan));
        Check.throwsA(NullPointerException.class, () -> session.attachImage((float[]) null));
        Check.equal(0, session.attachedImages(), "attached after the refusals");

        // One picture, two markers: the turn fails, the picture stays attached.
        session.attachImage(embeddings);
        Check.throwsPeak(Status.INVALID_ARGUMENT, "marks 2 places for images",
            () -> session.chat(Session.IMAGE_MARKER + " and " + Session.IMAGE_MARKER, null));
        Check.equal(1, session.attachedImages(), "attached after the failed turn");
        Check.equal(0, session.messageCount(), "messages after the failed turn");
        session.clearImages();
        Check.equal(0, session.attachedImages(), "attached after clearImages()");
        chat(session, "Once upon a time");
        Check.equal(0, session.message(0).imageCount(), "a message without pictures");
      }

      // Another model's projector (48 wide): the session is refused, naming both widths, and
      // counts as no dependent of the projector (close() would refuse otherwise).
      Projector narrow = Projector.load(Fixtures.imageProjector());
      Check.throwsPeak(Status.INVALID_ARGUMENT, "writes embeddings of 48 floats, but the model's width is 64",
          () -> new Session(model, params(narrow)));
      narrow.close();
      Check.throwsA(IllegalStateException.class, () -> new Session(model, params(narrow)));
    }
  }

  @Test
  public void aPictureOfTilesIsFramedByItsSize() throws Exception {
    try (Model model = Model.load(Fixtures.stories());
         Projector projector = Projector.load(Fixtures.imageTiledProjector64());
         ImageEncoder encoder = new ImageEncoder(projector);
         Image photo = Image.decode(photo())) {
      // Tiles of 32 pixels, the longest edge 96: 256 x 192 becomes 96 x 72, then 96 x 96, so 3 x 3
      // tiles and the overview, with the texts of Hugging Face's Idefics3 processor.
      PictureLayout layout = projector.pictureLayout(photo.width(), photo.height());
      Check.equal(10, layout.nFrames(), "frames");
      Check.equal(3, layout.gridRows(), "tiles down");
      Check.equal(3, layout.gridCols(), "tiles across");
      Check.equal("<fake_token_around_image><row_1_col_1>", layout.texts().get(0), "before the first tile");
      Check.equal("\n<fake_token_around_image><row_2_col_1>", layout.texts().get(3), "before the fourth");
      Check.equal("\n\n<fake_token_around_image><global-img>", layout.texts().get(9), "before the overview");
      Check.equal("<fake_token_around_image>", layout.texts().get(10), "after the overview");
      Check.throwsPeak(Status.INVALID_ARGUMENT, "the picture's width is -1", () -> projector.pictureLayout(-1, 5));

      float[] embeddings = encoder.encode(photo);
      Check.equal(10L * layout.tokensPerFrame() * 64, (long) embeddings.length, "every frame's embeddings");
      try (Session session = new Session(model, params(projector))) {
        Check.throwsPeak(Status.INVALID_ARGUMENT, "peak_session_attach_picture",
            () -> session.attachImage(embeddings));
        // 300 x 20 becomes 96 x 6, then 96 x 32: 1 x 3 tiles and the overview.
        Check.throwsPeak(Status.INVALID_ARGUMENT, "a picture of 300 x 20 pixels encodes to 64 (4 frames of 16)",
            () -> session.attachImage(embeddings, 300, 20));
        session.attachImage(encoder, photo);
        String answer = chat(session, "What is in the picture?");
        try (Session twin = new Session(model, params(projector))) {
          twin.attachImage(embeddings, photo.width(), photo.height());
          Check.equal(answer, chat(twin, "What is in the picture?"), "the twin's answer");
        }
      }
    }
  }

  @Test
  public void aQwenPictureIsPlacedByRowAndColumn() throws Exception {
    try (Model model = Model.load(Fixtures.qwen2vlModel());
         Projector projector = Projector.load(Fixtures.qwen2vlProjector());
         ImageEncoder encoder = new ImageEncoder(projector);
         Image photo = Image.decode(photo())) {
      // At most 64 x 64 pixels in patches of 4 merged 2 x 2: 256 x 192 becomes 72 x 48, 9 x 6 tokens.
      PictureLayout layout = projector.pictureLayout(photo.width(), photo.height());
      Check.equal(1, layout.nFrames(), "frames");
      Check.equal(54, layout.tokensPerFrame(), "tokens");
      Check.equal(9, layout.tokenCols(), "tokens across");
      float[] embeddings = encoder.encode(photo);
      try (Context placed = new Context(model, new ContextParams());
           Context inLine = new Context(model, new ContextParams())) {
        int[] bos = {1};
        placed.eval(bos);
        inLine.eval(bos);
        placed.evalPicture(embeddings, 54, 9);
        inLine.evalEmbeddings(embeddings, 54, false);
        float[] a = placed.logits(), b = inLine.logits();
        double diff = 0;
        for (int i = 0; i < a.length; ++i) diff = Math.max(diff, Math.abs(a[i] - b[i]));
        Check.isTrue(diff > 1e-4, "placed by row and column, the logits differ from the tokens in a line: " + diff);
        Check.throwsPeak(Status.INVALID_ARGUMENT, "not whole rows of a picture 5 tokens across",
            () -> placed.evalPicture(embeddings, 54, 5));
      }
      try (Session session = new Session(model, params(projector))) {
        Check.throwsPeak(Status.INVALID_ARGUMENT, "peak_session_attach_picture",
            () -> session.attachImage(embeddings));
        session.attachImage(embeddings, photo.width(), photo.height());
        String answer = chat(session, "What is in the picture?");
        try (Session twin = new Session(model, params(projector))) {
          twin.attachImage(encoder, photo);
          Check.equal(answer, chat(twin, "What is in the picture?"), "the twin's answer");
        }
      }
    }
  }

  @Test
  public void aSessionKeepsItsProjectorOpen() throws Exception {
    Model model = Model.load(Fixtures.stories());
    Projector projector = Projector.load(Fixtures.imageProjector64());
    Session session = new Session(model, params(projector));
    IllegalStateException refused = Check.throwsA(IllegalStateException.class, projector::close);
    Check.contains(refused.getMessage(), "still has 1 open image encoders or sessions", "closing a session's projector");
    try (ImageEncoder encoder = new ImageEncoder(projector); Image photo = Image.decode(photo())) {
      session.attachImage(encoder, photo);
    }
    chat(session, "Once upon a time");
    Check.equal(1, session.message(0).imageCount(), "the picture, the encoder closed");
    session.close();
    projector.close();
    Check.throwsA(IllegalStateException.class, () -> session.attachImage(new float[64]));
    Check.throwsA(IllegalStateException.class, session::attachedImages);
    model.close();
  }
}
