module kgo/bench/go

go 1.19
