package peak;

/** peak's status codes (peak_status in peak.h): {@code INVALID_ARGUMENT} is PEAK_ERR_INVALID_ARGUMENT. */
public enum Status {
  OK(0),
  INVALID_ARGUMENT(1),
  IO(2),
  FORMAT(3),
  UNSUPPORTED(4),
  TYPE_MISMATCH(5),
  NOT_FOUND(6),
  OUT_OF_MEMORY(7),
  BUFFER_TOO_SMALL(8),
  CONTEXT_FULL(9),
  /** A cancellation token (or a load's progress callback) cancelled the operation. */
  CANCELLED(10),
  TEMPLATE(11),
  NON_FINITE(12),
  INTERNAL(99);

  private final int code;

  Status(int code) {
    this.code = code;
  }

  /** The C API's value. */
  public int code() {
    return code;
  }

  /** The status of a C API value; INTERNAL for one this binding does not know. */
  public static Status of(int code) {
    for (Status s : values()) {
      if (s.code == code) return s;
    }
    return INTERNAL;
  }
}
