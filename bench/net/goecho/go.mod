module kgo/bench/net/goecho

go 1.19
