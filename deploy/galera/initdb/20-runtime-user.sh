#!/bin/bash
# Sourced by the MariaDB image's entrypoint while it initializes the data
# directory (after MARIADB_USER, seckill_migrate, the migrations' user, was
# created): the service's own user, seckill, which may only read and write
# rows of the service's databases; the schema is seckill_migrate's. Its
# password comes from the environment (SECKILL_DB_PASSWORD), never a command
# line; the statements go to the client on stdin. The galera profile's
# bootstrap node runs a copy, deploy/galera/initdb/20-runtime-user.sh, kept
# identical (compose_test.go; seckill_cluster is not there: no grant).
password=$(docker_sql_escape_string_literal "${SECKILL_DB_PASSWORD:?}")
docker_process_sql --database=mysql <<-SQL
	CREATE USER IF NOT EXISTS 'seckill'@'%' IDENTIFIED BY '${password}';
	GRANT SELECT, INSERT, UPDATE, DELETE ON seckill.* TO 'seckill'@'%';
SQL
if docker_process_sql --database=mysql -e "SHOW DATABASES LIKE 'seckill_cluster'" | grep -q seckill_cluster; then
	docker_process_sql --database=mysql <<-SQL
		GRANT SELECT, INSERT, UPDATE, DELETE ON seckill_cluster.* TO 'seckill'@'%';
	SQL
fi
