module retop.test/noret

go 1.19
