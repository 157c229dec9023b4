package peak;

/** How a model is loaded (peak_model_params); starts from peak's defaults. */
public final class ModelParams {
  boolean useMmap;
  boolean useMlock;
  int repackWeights;
  boolean checkTensors;

  public ModelParams() {
    Native.fillDefaults(this);
  }

  /** true (default): map the file; false: read it into memory. */
  public ModelParams useMmap(boolean value) {
    useMmap = value;
    return this;
  }

  public boolean useMmap() {
    return useMmap;
  }

  /** Lock the weights in RAM (best effort). */
  public ModelParams useMlock(boolean value) {
    useMlock = value;
    return this;
  }

  public boolean useMlock() {
    return useMlock;
  }

  public ModelParams repackWeights(Repack value) {
    repackWeights = value.ordinal();
    return this;
  }

  public Repack repackWeights() {
    return Repack.values()[repackWeights];
  }

  /** Read every tensor once and refuse the model at the first NaN or infinite value. */
  public ModelParams checkTensors(boolean value) {
    checkTensors = value;
    return this;
  }

  public boolean checkTensors() {
    return checkTensors;
  }
}
