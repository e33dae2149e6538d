module retop.test/change

go 1.19

require fixture v0.0.0

replace fixture => ../fixture
