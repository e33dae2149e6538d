module avx512

go 1.21

require fixture v0.0.0

replace fixture => ../fixture
