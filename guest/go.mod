module github.com/toolhost/toolhost/guest

go 1.26
