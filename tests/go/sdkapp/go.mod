module retop.test/sdkapp

go 1.19

require retopsdk v0.0.0

replace retopsdk => ../../../sdk/go
