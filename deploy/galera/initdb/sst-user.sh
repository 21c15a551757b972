#!/bin/bash
# Sourced by the MariaDB image's entrypoint on the bootstrap node (galera-1)
# while it initializes the data directory: the account mariabackup's state
# transfer logs in as (docker-compose.yml writes wsrep_sst_auth=sst:<password>
# into each node's option file). Its password comes from the environment,
# never a command line; the statements go to the client on stdin.
# The other nodes receive the account with the data directory.
sst_password=$(docker_sql_escape_string_literal "${SECKILL_GALERA_SST_PASSWORD:?}")
docker_process_sql --database=mysql <<-SQL
	CREATE USER IF NOT EXISTS 'sst'@'localhost' IDENTIFIED BY '${sst_password}';
	GRANT RELOAD, PROCESS, LOCK TABLES, BINLOG MONITOR ON *.* TO 'sst'@'localhost';
SQL
