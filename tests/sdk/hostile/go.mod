module hostile

go 1.19
