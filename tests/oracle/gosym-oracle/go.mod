module retop.test/gosym-oracle

go 1.19
