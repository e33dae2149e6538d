module retop.test/payments

go 1.19
