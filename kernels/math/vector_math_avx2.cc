// vector_math compiled for avx2 (only called when the CPU has it).
#define ET_ISA avx2
#include "kernels/math/vector_math_isa.inc"
