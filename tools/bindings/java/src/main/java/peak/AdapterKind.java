package peak;

/** What an {@link Adapter} is (peak_adapter_kind). */
public enum AdapterKind {
  /** A LoRA adapter: W·x + s·B·(A·x) for each adapted projection W. */
  LORA,
  /** A control vector: strength·direction[l] added to the residual stream after layer l. */
  CONTROL_VECTOR
}
