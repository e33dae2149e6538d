module retopsdk

go 1.19
