package peak;

/** One message of a session's conversation, as an app shows it. */
public final class Message {
  private final Role role;
  private final MessageState state;
  private final String text;

  /** Made by the glue. */
  Message(int role, int state, String text) {
    this.role = Role.values()[role];
    this.state = MessageState.values()[state];
    this.text = text;
  }

  public Role role() {
    return role;
  }

  public MessageState state() {
    return state;
  }

  public String text() {
    return text;
  }

  @Override
  public String toString() {
    return "[" + role + ", " + state + "] " + text;
  }
}
