def mean(values):
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


def variance(values):
    m = mean(values)
    return sum((v - m) ** 2 for v in values) / len(values)


def main():
    data = [float(x) for x in input().split()]
    print(mean(data), variance(data))


if __name__ == "__main__":
    main()
