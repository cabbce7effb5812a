//! CKernels: the relocatable kernel memory of the C ABI (being written).
