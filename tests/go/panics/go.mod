module retop.test/panics

go 1.19
