-- The HAProxy health check's user (no password, no privileges), created once
-- on the bootstrap node; Galera replicates it. The SST user is root, whose
-- password the image sets from MARIADB_ROOT_PASSWORD (docker-compose.yml).
CREATE USER IF NOT EXISTS 'haproxy'@'%';
