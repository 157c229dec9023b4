package peak;

/** The level of one of peak's messages (peak_log_level), most severe first. */
public enum LogLevel {
  ERROR,
  WARN,
  INFO,
  DEBUG;

  static LogLevel of(int level) {
    LogLevel[] all = values();
    return level >= 0 && level < all.length ? all[level] : DEBUG;
  }
}
