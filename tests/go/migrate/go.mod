module retop.test/migrate

go 1.19
