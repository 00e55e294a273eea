// vector_math compiled for avx512 (only called when the CPU has it).
#define ET_ISA avx512
#include "kernels/math/vector_math_isa.inc"
