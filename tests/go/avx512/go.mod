module avx512

go 1.21
