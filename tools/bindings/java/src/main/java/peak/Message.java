package peak;

/** One message of a session's conversation, as an app shows it. */
public final class Message {
  private final Role role;
  private final MessageState state;
  private final String text;
  private final int imageCount;

  /** Made by the glue. */
  Message(int role, int state, String text, int imageCount) {
    this.role = Role.values()[role];
    this.state = MessageState.values()[state];
    this.text = text;
    this.imageCount = imageCount;
  }

  public Role role() {
    return role;
  }

  public MessageState state() {
    return state;
  }

  /** The text; a picture the message shows is a {@link Session#IMAGE_MARKER} in it. */
  public String text() {
    return text;
  }

  /** The pictures the message shows, one at each {@link Session#IMAGE_MARKER} of its text. */
  public int imageCount() {
    return imageCount;
  }

  @Override
  public String toString() {
    return "[" + role + ", " + state + (imageCount > 0 ? ", " + imageCount + " images" : "") + "] " + text;
  }
}
