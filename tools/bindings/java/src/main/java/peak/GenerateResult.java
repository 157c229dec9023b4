package peak;

/** What a generation or chat turn did (peak_generate_result). */
public final class GenerateResult {
  long nPromptTokens;
  long nGeneratedTokens;
  int stopReason;
  double promptSeconds;
  double generateSeconds;
  long nDraftedTokens;
  long nAcceptedTokens;

  GenerateResult() {}

  public long nPromptTokens() {
    return nPromptTokens;
  }

  public long nGeneratedTokens() {
    return nGeneratedTokens;
  }

  public StopReason stopReason() {
    return StopReason.values()[stopReason];
  }

  public double promptSeconds() {
    return promptSeconds;
  }

  public double generateSeconds() {
    return generateSeconds;
  }

  /** Tokens prompt lookup drafted ({@link GenerateOptions#lookupNgram(int)}). */
  public long nDraftedTokens() {
    return nDraftedTokens;
  }

  /** Of the drafted tokens, those the sampler drew: the acceptance is their ratio. */
  public long nAcceptedTokens() {
    return nAcceptedTokens;
  }

  @Override
  public String toString() {
    return "GenerateResult{prompt " + nPromptTokens + " tokens in " + promptSeconds + " s, generated "
        + nGeneratedTokens + " in " + generateSeconds + " s, " + stopReason() + "}";
  }
}
