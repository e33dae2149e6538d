module retop.test/sdkapp

go 1.19

require (
	fixture v0.0.0
	retopsdk v0.0.0
)

replace (
	fixture => ../fixture
	retopsdk => ../../../sdk/go
)
