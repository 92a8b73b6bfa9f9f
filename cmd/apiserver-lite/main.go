package main

import (
	_ "github.com/gorilla/mux"
	_ "github.com/mattn/go-sqlite3"
	_ "github.com/spf13/pflag"
	_ "github.com/spf13/viper"
	_ "k8s.io/apimachinery/pkg/api/errors"
	_ "k8s.io/client-go/dynamic"
	_ "k8s.io/client-go/kubernetes/scheme"
	_ "k8s.io/client-go/tools/cache"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/pager"
	_ "k8s.io/client-go/discovery"
	_ "k8s.io/client-go/rest"
	_ "k8s.io/utils/clock"
	_ "k8s.io/klog/v2"
	_ "github.com/apiserver-lite/apiserver-lite/pkg/versioncache"
)

func main() {}
