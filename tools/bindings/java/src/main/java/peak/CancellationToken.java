package peak;

import java.nio.ByteBuffer;

/**
 * Stops a generation or a chat turn from another thread (or from its {@link TextCallback}):
 * give it to {@link GenerateOptions#cancellation}, then call {@link #cancel()}. While the prompt is
 * still evaluated, the call then throws {@link PeakException} with {@link Status#CANCELLED} (within
 * part of a batch) and leaves the context, sampler or session as it was before the call; once
 * generation began, it stops with {@link StopReason#ABORTED}, keeping what was written. A token
 * already cancelled cancels a call before it evaluates anything. peak never clears it: {@link
 * #reset()} it before reusing it. Any thread may use it at any time; one token may serve several
 * calls.
 */
public final class CancellationToken {
  // One int the C API reads with atomic loads (peak_generate_params.abort_flag); native memory that
  // lives as long as this object, so a call that holds the token can never read freed memory.
  final ByteBuffer flag = ByteBuffer.allocateDirect(4);

  public CancellationToken() {
    Native.load();
  }

  public void cancel() {
    Native.flagStore(flag, 1);
  }

  public boolean isCancelled() {
    return Native.flagLoad(flag) != 0;
  }

  public void reset() {
    Native.flagStore(flag, 0);
  }
}
