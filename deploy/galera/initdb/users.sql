-- The HAProxy health check's user (no password, no privileges), created once
-- on the bootstrap node; Galera replicates it. The state-transfer user is sst
-- (sst-user.sh, from SECKILL_GALERA_SST_PASSWORD; docker-compose.yml).
CREATE USER IF NOT EXISTS 'haproxy'@'%';
