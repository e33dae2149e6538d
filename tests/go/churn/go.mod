module churn

go 1.19
