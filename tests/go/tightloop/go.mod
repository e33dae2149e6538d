module retop.test/tightloop

go 1.19
