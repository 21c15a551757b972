-- The HAProxy health check's user (no password, no privileges) and the SST
-- user the joiners' mariabackup uses, created once on the bootstrap node;
-- Galera replicates them.
CREATE USER IF NOT EXISTS 'haproxy'@'%';
ALTER USER 'root'@'localhost' IDENTIFIED BY 'galera-sst';
