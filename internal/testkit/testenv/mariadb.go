package testenv

import (
	"github.com/testcontainers/testcontainers-go"
	tcmariadb "github.com/testcontainers/testcontainers-go/modules/mariadb"
	"github.com/testcontainers/testcontainers-go/wait"
)

// mariadbImage is the MariaDB the tests and docker-compose use.
const mariadbImage = "mariadb:10.11"

// mariadbReadyLog is what MariaDB's server prints once it takes TCP
// connections. The image's entrypoint first runs a server without networking
// ("port: 0") to initialise the data directory, so the port in the line is
// what tells the real start. (modules/mysql waits for "port: 3306  MySQL
// Community Server", which MariaDB never prints: its containers never became
// ready.)
const mariadbReadyLog = "port: 3306  mariadb.org binary distribution"

// mariadbOptions are the options testenv starts its MariaDB container with,
// on top of modules/mariadb's own: root with a password, a database, and the
// wait, stated here so that a unit test can check it without Docker.
func mariadbOptions() []testcontainers.ContainerCustomizer {
	return []testcontainers.ContainerCustomizer{
		tcmariadb.WithUsername("root"),
		tcmariadb.WithPassword("test"),
		tcmariadb.WithDatabase("test"),
		testcontainers.WithWaitStrategy(wait.ForAll(
			wait.ForLog(mariadbReadyLog),
			wait.ForListeningPort("3306/tcp"),
		)),
	}
}

// mariadbRequest is the container request mariadbOptions make of an empty
// one, for the unit test.
func mariadbRequest() (testcontainers.GenericContainerRequest, error) {
	req := testcontainers.GenericContainerRequest{ContainerRequest: testcontainers.ContainerRequest{Image: mariadbImage}}
	for _, o := range mariadbOptions() {
		if err := o.Customize(&req); err != nil {
			return req, err
		}
	}
	return req, nil
}
