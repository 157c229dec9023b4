package peak;

/** The element types a KV cache may hold. */
public enum CacheType {
  F32(0),
  F16(1),
  Q8_0(8),
  Q4_0(2);

  final int ggmlType;

  CacheType(int ggmlType) {
    this.ggmlType = ggmlType;
  }

  static CacheType of(int ggmlType) {
    for (CacheType t : values()) {
      if (t.ggmlType == ggmlType) return t;
    }
    throw new IllegalArgumentException("no cache type has the ggml type id " + ggmlType);
  }
}
