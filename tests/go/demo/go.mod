module retop.test/demo

go 1.19
