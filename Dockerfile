# Base images are pinned by digest (the multi-architecture index's), so a
# rebuild of the same commit gets the same toolchain and runtime files; a
# tag alone can be moved. Update both together: the tag says which release,
# the digest which build of it. No syntax directive: the builder's own
# frontend reads these instructions, so no frontend image is pulled.
# Build: a static binary (the SQLite driver is pure Go, so CGO stays off).
# The Go release is go.mod's.
FROM golang:1.26.8-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/seckill ./cmd/seckill

# Run: no shell, no package manager, a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot@sha256:afa5c872c891853ca7fcf1f12c3edb23f7eeef36189728842dd51042ff57f7ab
COPY --from=build /out/seckill /usr/local/bin/seckill
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/seckill"]
CMD ["serve"]
