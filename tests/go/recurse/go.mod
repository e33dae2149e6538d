module retop.test/recurse

go 1.19
