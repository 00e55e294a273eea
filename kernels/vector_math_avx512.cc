// vector_math compiled for avx512 (only called when the CPU has it).
#define ET_ISA avx512
#include "kernels/vector_math_isa.inc"
