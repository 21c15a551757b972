package stock

// ActivityKey names one more key of the activity, under its hash tag, for
// packages that keep per-activity state beside the stock (the payment
// locks): <prefix>seckill:{act:N}:<name>.
func ActivityKey(prefix string, activityID int64, name string) string {
	return activityKey(prefix, activityID, name)
}
