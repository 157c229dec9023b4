// Registers the avxvnni kernels (filled in per type as they land).
#include "kernels/kernel_table.h"

namespace peak {

void install_avxvnni_kernels(KernelTable& table) { (void)table; }

}  // namespace peak
