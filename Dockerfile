# syntax=docker/dockerfile:1
# Build: a static binary (the SQLite driver is pure Go, so CGO stays off).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/seckill ./cmd/seckill

# Run: no shell, no package manager, a non-root user.
FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/seckill /usr/local/bin/seckill
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/seckill"]
CMD ["serve"]
